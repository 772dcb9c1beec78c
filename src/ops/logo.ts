/** Vellum's mark for the API reference page: a folded sheet with a "V". */
export const VELLUM_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="140" height="32" viewBox="0 0 140 32" role="img" aria-label="Vellum">
<path d="M4 2h17l7 7v21H4z" fill="#f4efe4" stroke="#5b4b8a" stroke-width="2"/>
<path d="M21 2v7h7" fill="none" stroke="#5b4b8a" stroke-width="2"/>
<path d="M9 12l5 12 5-12" fill="none" stroke="#5b4b8a" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>
<text x="36" y="23" font-family="system-ui, sans-serif" font-size="20" font-weight="600" fill="#f4efe4">Vellum API</text>
</svg>`;
