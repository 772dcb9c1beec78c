/** The vellum-export document's name and version (export writes them, import checks them; no imports, the import worker loads it). */
export const EXPORT_FORMAT = 'vellum-export';
export const EXPORT_FORMAT_VERSION = 1;
