/** The vellum-export document's name and version (export writes them, import checks them; no imports, the import worker loads it). */
export const EXPORT_FORMAT = 'vellum-export';
export const EXPORT_FORMAT_VERSION = 2;
/** Versions import reads: 1 has no folders, pins or archive. */
export const IMPORT_FORMAT_VERSIONS = [1, 2] as const;
