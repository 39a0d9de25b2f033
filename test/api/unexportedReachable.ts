import { join, resolve } from 'node:path';

import ts from 'typescript';

/**
 * The declarations of ours (under `sourceRoot`) that a public signature of an entry point reaches but no entry point
 * exports, as `file#Name` — api-extractor's "forgotten export". Walks the declaration files the compiler emits for
 * the entries (the shape a user sees: inferred types spelled out, private members without types), from every
 * exported name through the types its declaration names, transitively.
 */
export function unexportedReachable(entries: string[], options: ts.CompilerOptions, sourceRoot: string): string[] {
  const emitted = new Map<string, string>();
  const emitOptions: ts.CompilerOptions = {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    rootDir: sourceRoot,
    outDir: '/dts',
    declarationDir: '/dts',
  };
  const source = ts.createProgram(entries, emitOptions);
  source.emit(undefined, (file, text) => emitted.set(resolve(file), text));
  const ours = (file: string) => emitted.has(resolve(file));
  const fromSource = (file: string) => join(sourceRoot, file.slice('/dts/'.length)).replace(/\.d\.ts$/, '.ts');
  const host = ts.createCompilerHost(emitOptions);
  const { fileExists, readFile } = host;
  host.fileExists = (file) => ours(file) || fileExists(file);
  host.readFile = (file) => emitted.get(resolve(file)) ?? readFile(file);
  host.directoryExists = (dir) => dir.startsWith('/dts') || ts.sys.directoryExists(dir);
  const dts = entries.map((entry) => join('/dts', entry.slice(sourceRoot.length)).replace(/\.ts$/, '.d.ts'));
  const program = ts.createProgram(dts, { ...emitOptions, noEmit: true, paths: {} }, host);
  const checker = program.getTypeChecker();
  const resolveAlias = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

  const exported = new Set<ts.Symbol>();
  for (const file of dts) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file) ?? ts.factory.createIdentifier(''));
    if (!module) throw new Error(`${fromSource(file)}: no module`);
    for (const symbol of checker.getExportsOfModule(module)) exported.add(resolveAlias(symbol));
  }
  const seen = new Set<ts.Symbol>();
  const hidden = new Set<string>();
  const hiddenMember = (node: ts.Node) =>
    (ts.canHaveModifiers(node) &&
      ts
        .getModifiers(node)
        ?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword)) ||
    ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node)) && ts.isPrivateIdentifier(node.name));
  let from = '';
  const reach = (symbol: ts.Symbol): void => {
    if (seen.has(symbol)) return;
    seen.add(symbol);
    const by = from;
    for (const declaration of symbol.declarations ?? []) {
      const file = declaration.getSourceFile().fileName;
      if (!ours(file)) continue;
      if (!exported.has(symbol))
        hidden.add(`${fromSource(file).slice(sourceRoot.length + 1)}#${symbol.name} (reached from ${by})`);
      from = symbol.name;
      visit(declaration);
      from = by;
    }
  };
  const visit = (node: ts.Node): void => {
    if (hiddenMember(node)) return;
    const name = ts.isTypeReferenceNode(node)
      ? node.typeName
      : ts.isExpressionWithTypeArguments(node)
        ? node.expression
        : ts.isTypeQueryNode(node)
          ? node.exprName
          : undefined;
    const symbol = name && checker.getSymbolAtLocation(name);
    if (symbol && !(resolveAlias(symbol).flags & ts.SymbolFlags.TypeParameter)) reach(resolveAlias(symbol));
    ts.forEachChild(node, visit);
  };
  for (const symbol of exported) reach(symbol);
  return [...hidden].sort();
}
