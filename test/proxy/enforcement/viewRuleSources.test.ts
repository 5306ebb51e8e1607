/** Which base columns a view's computed columns read, from its stored rule (nodeToString text). */
import { describe, expect, it } from 'vitest';
import { viewColumnOrigins, viewComputedSources } from '../../../src/proxy/enforcement/catalog/viewRuleOrigins.js';

const RTABLE = ':rtable ({RANGETBLENTRY :alias <> :eref {ALIAS :aliasname customers :colnames ("id" "phone" "note")} :rtekind 0 :relid 16389 :inh true :relkind r}'
  + ' {RANGETBLENTRY :alias {ALIAS :aliasname s :colnames <>} :rtekind 1 :relid 0 :subquery {QUERY :commandType 1 :rtable ({RANGETBLENTRY :rtekind 0 :relid 77})'
  + ' :targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 5} :resno 1 :resorigtbl 77 :resorigcol 5 :resjunk false})}})';

function rule(targets: string): string {
  return `({QUERY :commandType 1 :querySource 0 ${RTABLE} :jointree {FROMEXPR :fromlist ({RANGETBLREF :rtindex 1}) :quals <>} :targetList (${targets}) :override 0})`;
}

const PLAIN_ID = '{TARGETENTRY :expr {VAR :varno 1 :varattno 1 :vartype 23 :varnullingrels (b) :varlevelsup 0 :location -1} :resno 1 :resname id :resorigtbl 16389 :resorigcol 1 :resjunk false}';
const UPPER_PHONE = '{TARGETENTRY :expr {FUNCEXPR :funcid 871 :args ({VAR :varno 1 :varattno 2 :vartype 25 :varnullingrels (b) :varlevelsup 0 :location -1}) :location -1} :resno 2 :resname up :resorigtbl 0 :resorigcol 0 :resjunk false}';
const WHOLE_ROW = '{TARGETENTRY :expr {FUNCEXPR :funcid 3155 :args ({VAR :varno 1 :varattno 0 :vartype 16391 :varlevelsup 0}) :location -1} :resno 3 :resname j :resorigtbl 0 :resorigcol 0 :resjunk false}';
const CONSTANT = '{TARGETENTRY :expr {CONST :consttype 23 :constlen 4 :constbyval true :constisnull false :location -1 :constvalue 4 [ 1 0 0 0 0 0 0 0 ]} :resno 4 :resname one :resorigtbl 0 :resorigcol 0 :resjunk false}';
const FROM_SUBQUERY = '{TARGETENTRY :expr {OPEXPR :opno 98 :args ({VAR :varno 2 :varattno 1 :varlevelsup 0} {VAR :varno 1 :varattno 3 :varlevelsup 0})} :resno 5 :resname x :resorigtbl 0 :resorigcol 0 :resjunk false}';
const WITH_SUBLINK = '{TARGETENTRY :expr {SUBLINK :subLinkType 4 :subselect {QUERY :rtable ({RANGETBLENTRY :rtekind 0 :relid 16389}) :targetList ({TARGETENTRY :expr {VAR :varno 1 :varattno 2 :varlevelsup 0} :resno 1 :resorigtbl 16389 :resorigcol 2 :resjunk false})}} :resno 6 :resname m :resorigtbl 0 :resorigcol 0 :resjunk false}';
const JUNK = '{TARGETENTRY :expr {FUNCEXPR :args ({VAR :varno 1 :varattno 2 :varlevelsup 0})} :resno 7 :resname sort :resorigtbl 0 :resorigcol 0 :resjunk true}';

describe('view computed sources', () => {
  const action = rule([PLAIN_ID, UPPER_PHONE, WHOLE_ROW, CONSTANT, FROM_SUBQUERY, WITH_SUBLINK, JUNK].join(' '));

  it('names the base columns an expression reads from the view’s own relations', () => {
    const sources = viewComputedSources(action);
    expect(sources.get(2)).toEqual([{ oid: 16389, attnum: 2 }]);
    expect(sources.get(3)).toEqual([{ oid: 16389, attnum: 0 }]); // the whole row
    expect(sources.get(4)).toEqual([]); // a constant reads nothing
  });

  it('says unknown for reads through a subquery in FROM or a sublink', () => {
    const sources = viewComputedSources(action);
    expect(sources.get(5)).toBe('unknown');
    expect(sources.get(6)).toBe('unknown');
  });

  it('leaves plain columns (origins) and junk entries out', () => {
    const sources = viewComputedSources(action);
    expect(sources.has(1)).toBe(false);
    expect(sources.has(7)).toBe(false);
    expect([...viewColumnOrigins(action)]).toEqual([[1, { oid: 16389, attnum: 1 }]]);
  });
});
