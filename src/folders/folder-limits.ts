/** The limits live at src/'s root (errors.ts words its errors with them and imports no feature). */
export { FOLDER_MAX_DEPTH, FOLDERS_MAX } from '../limits.js';
