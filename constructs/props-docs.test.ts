import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const here = resolve(import.meta.dirname);

/**
 * Every field of every props type a construct takes, its nested props types included (those declared here), as
 * `Interface.field` with what its declaration documents: an editor shows nothing else.
 */
function propsFields(): { field: string; documented: boolean; optional: boolean; hasDefault: boolean }[] {
  const program = ts.createProgram([join(here, 'index.ts')], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(join(here, 'index.ts'))!;
  const seen = new Set<ts.Symbol>();
  const fields: ReturnType<typeof propsFields> = [];
  const visit = (type: ts.Type): void => {
    for (const part of type.isUnion() ? type.types : [type]) {
      const element = checker.isArrayType(part) ? checker.getTypeArguments(part as ts.TypeReference)[0] : part;
      const symbol = element?.getSymbol();
      const declaration = symbol?.declarations?.[0];
      if (!symbol || !declaration || !ts.isInterfaceDeclaration(declaration) || !declaration.getSourceFile().fileName.startsWith(here) || seen.has(symbol))
        continue;
      seen.add(symbol);
      for (const property of checker.getPropertiesOfType(element!)) {
        const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
        fields.push({
          field: `${symbol.name}.${property.name}`,
          documented: ts.displayPartsToString(property.getDocumentationComment(checker)).trim() !== '',
          optional,
          hasDefault: property.getJsDocTags().some((tag) => tag.name === 'default' && ts.displayPartsToString(tag.text).trim() !== ''),
        });
        visit(checker.getNonNullableType(checker.getTypeOfSymbol(property)));
      }
    }
  };
  for (const exported of checker.getExportsOfModule(checker.getSymbolAtLocation(index)!)) {
    const declaration = exported.declarations?.[0];
    if (!declaration || !ts.isClassDeclaration(declaration)) continue;
    for (const signature of checker.getTypeOfSymbol(exported).getConstructSignatures()) {
      const props = signature.getParameters()[2];
      if (props) visit(checker.getNonNullableType(checker.getTypeOfSymbol(props)));
    }
  }
  return fields;
}

describe('construct props', () => {
  const fields = propsFields();

  it('are found (the constructs, their props and what those nest)', () => {
    expect(fields.map((f) => f.field)).toEqual(
      expect.arrayContaining(['ExtendedDeploymentProps.strategy', 'StrategyProps.updateStrategy', 'RollingUpdateProps.maxSurge', 'AgentInstallProps.image']),
    );
  });

  it('document every field, and the default of every optional one', () => {
    expect(fields.filter((f) => !f.documented).map((f) => f.field)).toEqual([]);
    expect(fields.filter((f) => f.optional && !f.hasDefault).map((f) => f.field)).toEqual([]);
  });
});
