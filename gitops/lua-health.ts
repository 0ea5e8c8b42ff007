import { LuaFactory, LuaLibraries } from 'wasmoon';

/** What an Argo CD health script returns. */
export interface HealthStatus {
  readonly status: string;
  readonly message: string;
}

/** The statuses Argo CD accepts from a health script; anything else becomes Unknown. */
export const ARGO_HEALTH_STATUSES = ['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown'] as const;
/** One of Argo CD's health statuses. */
export type ArgoHealthStatus = (typeof ARGO_HEALTH_STATUSES)[number];

const factory = new LuaFactory();

/**
 * Runs a health script the way Argo CD does: a fresh Lua state with only the base and table libraries (no string, no
 * math, no io), the object as the global `obj`, and the returned table read as `{status, message}`.
 */
export async function runHealthScript(script: string, obj: unknown): Promise<HealthStatus> {
  const engine = await factory.createEngine({ openStandardLibs: false });
  try {
    engine.global.loadLibrary(LuaLibraries.Base);
    engine.global.loadLibrary(LuaLibraries.Table);
    engine.global.set('obj', obj);
    const result = (await engine.doString(script)) as { status?: unknown; message?: unknown } | undefined;
    if (typeof result !== 'object' || result === null) throw new Error(`the script returned ${typeof result}, not a table`);
    return {
      status: String(result.status),
      message: result.message === undefined ? '' : typeof result.message === 'string' ? result.message : JSON.stringify(result.message),
    };
  } finally {
    engine.global.close();
  }
}
