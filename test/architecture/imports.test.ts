/**
 * The shape of src/: no import cycles between files, and no deep imports
 * between top-level modules (src/<module>/...). A file of one module reaches
 * another module only through that module's index.ts, so each module's
 * public surface is written down in one place and data flows one way:
 * front door (cli, api, proxy) → enforcement → engine → keys.
 *
 * Type-only imports (`import type`, `import { type X }`, `import('…').X`)
 * count like value imports: they are edges of the graph all the same, and a
 * type-only cycle is one refactoring away from a value cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

interface Edge {
  readonly from: string; // path relative to src/, with '/'
  readonly to: string;
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const toKey = (absolute: string): string => relative(SRC, absolute).split(sep).join('/');

/** Every module specifier a file names, with whether the reference is for types only. */
function specifiers(file: string): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (
        clause.name === undefined && bindings !== undefined && ts.isNamedImports(bindings)
        && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const typeOnly = node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause)
        && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
      && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) found.push({ specifier: argument.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function buildGraph(): { files: string[]; edges: Edge[] } {
  const absolute = sourceFiles(SRC).sort();
  const known = new Set(absolute);
  const edges: Edge[] = [];
  for (const file of absolute) {
    for (const { specifier, typeOnly } of specifiers(file)) {
      if (!specifier.startsWith('.')) continue; // a package
      const target = resolve(dirname(file), specifier);
      const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')];
      const hit = candidates.find((candidate) => known.has(candidate));
      if (hit) edges.push({ from: toKey(file), to: toKey(hit), typeOnly });
    }
  }
  return { files: absolute.map(toKey), edges };
}

/** 'engine' for 'engine/kinds/x.ts'; '' for a file directly in src/ such as index.ts. */
const moduleOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '');

/** Strongly connected components of more than one file (or a file importing itself), each as one cycle path. */
function cycles(files: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) next.get(e.from)?.push(e.to);

  // Tarjan; recursion depth is bounded by the number of files.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const strongConnect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) components.push(component);
    }
  };
  for (const f of files) if (!index.has(f)) strongConnect(f);

  // One readable path per component: from its first file, the shortest way back to it inside the component.
  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    let found: string | undefined;
    while (queue.length > 0 && found === undefined) {
      const v = queue.shift()!;
      for (const w of next.get(v) ?? []) {
        if (!members.has(w)) continue;
        if (w === start) { found = v; break; }
        if (!previous.has(w)) { previous.set(w, v); queue.push(w); }
      }
    }
    const path = [start];
    for (let v = found; v !== undefined && v !== start; v = previous.get(v)) path.splice(1, 0, v);
    path.push(start);
    return path;
  });
}

const graph = buildGraph();

describe('src/ import structure', () => {
  it('finds the source files and their imports', () => {
    expect(graph.files.length).toBeGreaterThan(50);
    expect(graph.edges.length).toBeGreaterThan(100);
  });

  it('has no import cycles between files (type-only imports included)', () => {
    const valueEdges = new Set(graph.edges.filter((e) => !e.typeOnly).map((e) => `${e.from} ${e.to}`));
    const found = cycles(graph.files, graph.edges).map((path) => path
      .map((file, i) => (i === 0 ? file : `${valueEdges.has(`${path[i - 1]} ${file}`) ? '' : '(type) '}→ ${file}`))
      .join(' '));
    expect(found, `import cycles ((type) marks a type-only import):\n  ${found.join('\n  ')}`).toEqual([]);
  });

  it('gives each top-level module an index.ts', () => {
    const modules = [...new Set(graph.files.map(moduleOf))].filter((m) => m !== '');
    const missing = modules.filter((m) => !graph.files.includes(`${m}/index.ts`));
    expect(missing, `modules without an index.ts: ${missing.join(', ')}`).toEqual([]);
  });

  it('reaches another top-level module only through its index.ts', () => {
    const deep = [...new Set(graph.edges
      .filter((e) => moduleOf(e.from) !== moduleOf(e.to) && e.to !== `${moduleOf(e.to)}/index.ts`)
      .map((e) => `${e.from} → ${e.to}`))];
    expect(deep, `deep imports between modules:\n  ${deep.join('\n  ')}`).toEqual([]);
  });

  it('has no cycles between top-level modules', () => {
    const modules = [...new Set(graph.files.map(moduleOf))];
    const edges = [...new Set(graph.edges
      .filter((e) => moduleOf(e.from) !== moduleOf(e.to))
      .map((e) => `${moduleOf(e.from)} ${moduleOf(e.to)}`))]
      .map((pair) => { const [from, to] = pair.split(' ') as [string, string]; return { from, to, typeOnly: false }; });
    const found = cycles(modules, edges).map((path) => path.map((m) => m || '(src root)').join(' → '));
    expect(found, `cycles between modules:\n  ${found.join('\n  ')}`).toEqual([]);
  });
});
