import ts from 'typescript';

export interface ExportedName {
  /** `class`, `function`, `const`, `interface`, `type`, `enum` (joined with `+` when a name is several); a value
   * exported with `export type` is `type-only class` and so on. */
  kind: string;
  /** Where it is declared (file and position): a name exported twice must mean the same thing. */
  declaredAt: string;
}

function kindOf(symbol: ts.Symbol): string {
  const flags = symbol.flags;
  const kinds: string[] = [];
  if (flags & ts.SymbolFlags.Class) kinds.push('class');
  else if (flags & ts.SymbolFlags.Function) kinds.push('function');
  else if (flags & ts.SymbolFlags.Variable) kinds.push('const');
  if (flags & ts.SymbolFlags.Enum) kinds.push('enum');
  if (flags & ts.SymbolFlags.Interface && !(flags & ts.SymbolFlags.Class)) kinds.push('interface');
  if (flags & ts.SymbolFlags.TypeAlias) kinds.push('type');
  return kinds.join('+') || 'other';
}

/** Whether the export (or an alias it goes through) is `export type`, so no value exists at run time. */
function typeOnly(symbol: ts.Symbol, checker: ts.TypeChecker): boolean {
  let current: ts.Symbol = symbol;
  while (current.flags & ts.SymbolFlags.Alias) {
    if ((current.declarations ?? []).some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration)))
      return true;
    current = checker.getImmediateAliasedSymbol(current) ?? current;
    if (current === symbol) break;
  }
  return false;
}

/** The exported names of each entry file, sorted: `{ file: { name: { kind, declaredAt } } }`. */
export function exportedSurface(
  files: string[],
  options: ts.CompilerOptions,
): Record<string, Record<string, ExportedName>> {
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const surface: Record<string, Record<string, ExportedName>> = {};
  for (const file of files) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file} is not a module`);
    const names: Record<string, ExportedName> = {};
    for (const symbol of checker
      .getExportsOfModule(module)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const kind = kindOf(target);
      const declaredAt = (target.declarations ?? [])
        .map((declaration) => `${declaration.getSourceFile().fileName}:${declaration.pos}`)
        .join(',');
      names[symbol.name] = {
        kind: typeOnly(symbol, checker) && kind !== 'interface' && kind !== 'type' ? `type-only ${kind}` : kind,
        declaredAt,
      };
    }
    surface[file] = names;
  }
  return surface;
}
