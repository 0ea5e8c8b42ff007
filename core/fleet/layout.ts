/** Where a cluster's output goes, below the render's output folder: `clusters/<cluster>`. */
export function clusterFolder(cluster: string): string {
  return `clusters/${cluster}`;
}

/** Where the engines' objects go, below the render's output folder. */
export const ARGOCD_FOLDER = 'fleet/argocd';
/** Where the Flux Kustomizations go, below the render's output folder. */
export const FLUX_FOLDER = 'fleet/flux';
