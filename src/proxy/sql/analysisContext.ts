/**
 * What every part of one statement's analysis shares: the text (for constant ends), the memoised
 * schema answers, the findings, and a way to analyse a nested query exactly once.
 */
import type { Node } from 'libpg-query';
import type { OutputColumn, Scope } from './nameScope.js';
import type { RelationLookup } from './relationLookup.js';
import type { SqlText } from './sqlText.js';
import type { StatementFindings } from './statementFindings.js';

export interface AnalysisContext {
  readonly text: SqlText;
  readonly relations: RelationLookup;
  readonly findings: StatementFindings;
  /**
   * Analyses a nested query (SELECT, or INSERT/UPDATE/DELETE/MERGE with RETURNING) seen from
   * `outer`, recording what it finds, and returns its output columns. Memoised per node, so a
   * subquery met twice (as an operand, then by a generic walk) is analysed once.
   */
  subquery(node: Node, outer: Scope): readonly OutputColumn[];
}
