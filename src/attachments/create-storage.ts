import type { Config } from '../config.js';
import type { Db } from '../db/schema.js';
import { databaseStorage } from './database-storage.js';
import { s3Storage } from './s3-storage.js';
import type { AttachmentStorage } from './storage.js';

/** The storage ATTACHMENT_STORAGE names. */
export function createStorage(config: Config, db: Db): AttachmentStorage {
  return config.attachmentStorage.kind === 's3' ? s3Storage(config.attachmentStorage) : databaseStorage(db);
}
