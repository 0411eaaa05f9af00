/**
 * What a server process started by a test inherits from the run, and nothing else: PATH, HOME, and Node's compile
 * cache when the run keeps one (the global setup does).
 */
export function childEnv(): Record<string, string> {
  const names = ['PATH', 'HOME', 'NODE_COMPILE_CACHE'] as const;
  return Object.fromEntries(names.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
}
