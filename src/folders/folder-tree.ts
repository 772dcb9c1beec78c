import type { FolderRecord } from './folders.repository.js';

/**
 * The owner's folders as a tree, for the exports. Nothing here recurses and no path is built
 * before it is written: a path is as long as its depth, so building every folder's path up front
 * (as export once did, recursively, then sorting them) cost the square of the depth in time and
 * memory. Trees made before the depth limit (thousands of levels) must still export.
 */
export class FolderTree {
  private readonly byId = new Map<string, FolderRecord>();
  private readonly children = new Map<string | null, FolderRecord[]>();
  private readonly cache = new Map<string, string>();

  constructor(folders: readonly FolderRecord[]) {
    for (const folder of folders) {
      this.byId.set(folder.id, folder);
      let siblings = this.children.get(folder.parent_id);
      if (siblings === undefined) this.children.set(folder.parent_id, (siblings = []));
      siblings.push(folder);
    }
    // Siblings by name, in code units: the order a sort of the paths gave for names like most.
    for (const siblings of this.children.values()) siblings.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Every folder reachable from the top, parents before their children, siblings by name. `names`
   * is the folder's path as names from the top: one array, changed as the walk goes on (copy it to keep it).
   */
  *walk(): Generator<{ folder: FolderRecord; names: readonly string[] }> {
    const names: string[] = [];
    const stack: Array<{ list: FolderRecord[]; next: number }> = [{ list: this.children.get(null) ?? [], next: 0 }];
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      if (top.next === top.list.length) {
        stack.pop();
        names.pop();
        continue;
      }
      const folder = top.list[top.next++]!;
      names.push(folder.name);
      yield { folder, names };
      stack.push({ list: this.children.get(folder.id) ?? [], next: 0 });
    }
  }

  /** A folder's path (`Work/Plans`), kept once asked for (a note's folder is asked for again); undefined for none. */
  pathOf(id: string): string | undefined {
    const known = this.cache.get(id);
    if (known !== undefined) return known;
    const names: string[] = [];
    // At most one step per folder: a cycle (which moves prevent) cannot loop here.
    for (let at = this.byId.get(id), steps = 0; at !== undefined && steps <= this.byId.size; at = at.parent_id === null ? undefined : this.byId.get(at.parent_id), steps += 1) {
      names.push(at.name);
    }
    if (names.length === 0) return undefined;
    const path = names.reverse().join('/');
    this.cache.set(id, path);
    return path;
  }
}
