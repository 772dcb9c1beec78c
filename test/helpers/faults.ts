import {
  AliasNode,
  TableNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type SelectQueryNode,
  type UnknownRow,
} from 'kysely';
import type { Database } from '../../src/db/database.js';

/** The error a FailingQueries plugin throws; its message names the query it stopped. */
export class InjectedFailure extends Error {
  override name = 'InjectedFailure';
}

/** Which selects count: FROM names `from`; with `join`, they also join that table, without it they join nothing. */
export interface QueryMatch {
  from: string;
  join?: string;
}

/**
 * A Kysely plugin that makes one chosen query fail: the `failAt`-th select (1-based) that fits
 * `match` throws before it reaches the database, which the caller sees exactly like a database
 * error (a rejected promise). Only tests install it, on a handle of their own (db.withPlugin), so
 * production paths carry nothing for it.
 */
export class FailingQueries implements KyselyPlugin {
  private seen = 0;

  constructor(
    private readonly match: QueryMatch,
    private readonly failAt: number,
  ) {}

  /** How many matching queries ran (or were stopped) so far. */
  get count(): number {
    return this.seen;
  }

  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (node.kind === 'SelectQueryNode' && this.fits(node)) {
      this.seen += 1;
      if (this.seen === this.failAt)
        throw new InjectedFailure(`injected failure: select ${this.seen} from ${this.match.from}`);
    }
    return node;
  }

  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result;
  }

  private fits(node: SelectQueryNode): boolean {
    const joins = (node.joins ?? []).map((join) => tableName(join.table));
    return (
      node.from !== undefined &&
      node.from.froms.map(tableName).includes(this.match.from) &&
      (this.match.join === undefined ? joins.length === 0 : joins.includes(this.match.join))
    );
  }
}

/** The table a FROM or JOIN item names, aliased or not. */
function tableName(item: OperationNode): string {
  const table = AliasNode.is(item) ? item.node : item;
  return TableNode.is(table) ? table.table.identifier.name : '';
}

/** `database` with every query going through `plugin` (same connections, same close). */
export function withFaults(database: Database, plugin: KyselyPlugin): Database {
  return { ...database, db: database.db.withPlugin(plugin) };
}
