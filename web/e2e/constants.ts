/** The administrator every worker's service creates from its environment (fixtures.ts). */
export const ADMIN = { username: 'admin', password: 'violet-Harbor-lantern-42-quietly' };
/** Long and varied enough for every local rule; only the (fake) breach API refuses it. */
export const BREACHED_PASSWORD = 'Maple-syrup-Orbit-77-thunder-kettle';
