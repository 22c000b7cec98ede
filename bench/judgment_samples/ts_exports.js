// Exported top-level declarations of each .ts file, as the TypeScript compiler lists them.
const ts = require(process.argv[2]);
const files = JSON.parse(require("fs").readFileSync(0, "utf8"));
const program = ts.createProgram(files, { noResolve: true, noLib: true, allowJs: false, target: ts.ScriptTarget.ESNext });
const checker = program.getTypeChecker();
const out = [];
function topLevel(decl, sf) {
  if (decl.getSourceFile() !== sf) return false;
  let node = decl;
  if (ts.isVariableDeclaration(node)) node = node.parent.parent;
  return node.parent === sf || (ts.isModuleBlock(node.parent) === false && node.parent === sf);
}
for (const sf of program.getSourceFiles()) {
  if (!files.includes(sf.fileName)) continue;
  const mod = checker.getSymbolAtLocation(sf);
  if (!mod) continue;
  for (let sym of checker.getExportsOfModule(mod)) {
    let target = sym;
    if (sym.flags & ts.SymbolFlags.Alias) {
      try { target = checker.getAliasedSymbol(sym); } catch (e) { continue; }
    }
    for (const decl of target.declarations || []) {
      if (!topLevel(decl, sf)) continue;
      const name = ts.getNameOfDeclaration(decl);
      if (!name) continue;
      const line = sf.getLineAndCharacterOfPosition(decl.getStart(sf)).line + 1;
      out.push([sf.fileName, name.getText(sf), line, ts.SyntaxKind[decl.kind]]);
    }
  }
}
process.stdout.write(JSON.stringify(out));
