/** "Chrome on Linux" from a user-agent string; the string itself when it names no known browser. */
export function deviceName(userAgent: string | null): string {
  if (userAgent === null || userAgent.trim() === '') return 'Unknown browser';
  const browser = /Edg(e|A|iOS)?\//.test(userAgent)
    ? 'Edge'
    : /OPR\/|Opera/.test(userAgent)
      ? 'Opera'
      : /Firefox\/|FxiOS\//.test(userAgent)
        ? 'Firefox'
        : /(Headless)?Chrome\/|CriOS\/|Chromium\//.test(userAgent)
          ? 'Chrome'
          : /Safari\//.test(userAgent) && /Version\//.test(userAgent)
            ? 'Safari'
            : /^curl\//.test(userAgent)
              ? 'curl'
              : undefined;
  const system = /iPhone|iPad|iPod/.test(userAgent)
    ? 'iOS'
    : /Android/.test(userAgent)
      ? 'Android'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(userAgent)
          ? 'macOS'
          : /CrOS/.test(userAgent)
            ? 'ChromeOS'
            : /Linux/.test(userAgent)
              ? 'Linux'
              : undefined;
  if (browser === undefined) return userAgent.length > 60 ? `${userAgent.slice(0, 57)}…` : userAgent;
  return system === undefined ? browser : `${browser} on ${system}`;
}
