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

  /** Adds folders (export reads them a page at a time, taking turns between pages). */
  add(folders: readonly FolderRecord[]): void {
    for (const folder of folders) {
      this.byId.set(folder.id, folder);
      let siblings = this.children.get(folder.parent_id);
      if (siblings === undefined) this.children.set(folder.parent_id, (siblings = []));
      siblings.push(folder);
    }
  }

  /** A folder's subfolders by name, in code units (the order a sort of the paths gave for most names); sorted as the walk reaches them. */
  private childrenOf(id: string | null): FolderRecord[] {
    const list = this.children.get(id);
    if (list === undefined) return [];
    if (list.length > 1) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return list;
  }

  /**
   * Every folder reachable from the top, parents before their children, siblings by name. `names`
   * is the folder's path as names from the top: one array, changed as the walk goes on (copy it to
   * keep it); `leaf`: it has no subfolder.
   */
  *walk(): Generator<{ folder: FolderRecord; names: readonly string[]; leaf: boolean }> {
    const names: string[] = [];
    const stack: Array<{ list: FolderRecord[]; next: number }> = [{ list: this.childrenOf(null), next: 0 }];
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      if (top.next === top.list.length) {
        stack.pop();
        names.pop();
        continue;
      }
      const folder = top.list[top.next++]!;
      const children = this.childrenOf(folder.id);
      names.push(folder.name);
      yield { folder, names, leaf: children.length === 0 };
      stack.push({ list: children, next: 0 });
    }
  }

  /** A folder's path (`Work/Plans`), kept once asked for (a note's folder is asked for again); undefined for none. */
  pathOf(id: string): string | undefined {
    const known = this.cache.get(id);
    if (known !== undefined) return known;
    const names: string[] = [];
    // At most one step per folder: a cycle (which moves prevent) cannot loop here.
    for (
      let at = this.byId.get(id), steps = 0;
      at !== undefined && steps <= this.byId.size;
      at = at.parent_id === null ? undefined : this.byId.get(at.parent_id), steps += 1
    ) {
      names.push(at.name);
    }
    if (names.length === 0) return undefined;
    const path = names.reverse().join('/');
    this.cache.set(id, path);
    return path;
  }
}
