import { AdminScreen } from './admin';
import type { User } from './api';
import { UserDetail } from './user-detail';

/** Administration: the lists at `/admin`, one account at `/admin/users/{id}`. */
export function AdminScreens({ me, path }: { me: User; path: string }) {
  const detail = /^\/admin\/users\/([^/]+)$/.exec(path);
  if (detail) return <UserDetail key={detail[1]} id={decodeURIComponent(detail[1]!)} me={me} />;
  return <AdminScreen me={me} />;
}
