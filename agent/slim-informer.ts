import { ListWatch, Watch, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';

/**
 * Drops metadata.managedFields, which the API server sends with every object and the agent never reads: about a third
 * of a pod's JSON. Informer caches hold every pod of every ExtendedDeployment, so this is a third less memory for
 * them (controller-runtime's caches strip it for the same reason). Modifies and returns `object`.
 */
export function withoutManagedFields<T extends KubernetesObject>(object: T): T {
  if (object?.metadata && 'managedFields' in object.metadata) delete object.metadata.managedFields;
  return object;
}

/** A Watch that hands every object on through `transform`. */
class TransformingWatch<T extends KubernetesObject> extends Watch {
  constructor(
    kc: KubeConfig,
    private readonly transform: (object: T) => T,
  ) {
    super(kc);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: any, watchObj?: any) => void,
    done: (err: any) => void,
  ): Promise<AbortController> {
    return super.watch(path, queryParams, (phase, apiObj, watchObj) => callback(phase, this.transform(apiObj as T), watchObj), done);
  }
}

/**
 * An informer factory (client-node's makeInformer signature, so ResilientInformer takes it) whose cache holds every
 * listed and watched object as `transform` returns it, optionally narrowed by a field selector.
 */
export function transformingInformer<T extends KubernetesObject>(transform: (object: T) => T, fieldSelector?: string) {
  return (kc: KubeConfig, path: string, list: () => Promise<KubernetesListObject<T>>, labelSelector?: string): Informer<T> & ObjectCache<T> => {
    const transformedList = async () => {
      const result = await list();
      result.items = (result.items ?? []).map(transform);
      return result;
    };
    return new ListWatch<T>(path, new TransformingWatch(kc, transform), transformedList, false, labelSelector, fieldSelector);
  };
}

/**
 * client-node's makeInformer (a ListWatch), with every listed and watched object stored without managedFields. Same
 * signature, so ResilientInformer takes it as its factory.
 */
export function slimInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: () => Promise<KubernetesListObject<T>>,
  labelSelector?: string,
): Informer<T> & ObjectCache<T> {
  return transformingInformer<T>(withoutManagedFields)(kc, path, list, labelSelector);
}
