/** Where a request came from: recorded with audit events and with each refresh token. */
export interface ClientInfo {
  userAgent: string | undefined;
  ip: string | undefined;
}
