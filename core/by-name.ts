/** Orders objects by name (code-unit order, as Kubernetes sorts names), so every choice among them is stable. */
export const byName = <T extends { readonly name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
