/** The limits live in shared/ (errors.ts words its errors with them and imports no feature). */
export { FOLDER_MAX_DEPTH, FOLDERS_MAX } from '../shared/folder-limits.js';
