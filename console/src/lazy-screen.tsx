import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * A screen loaded on first use (its own chunk, fetched from /console/assets like the rest): the first screen
 * does not carry the code of screens most visits never open.
 */
export function lazyScreen<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let loaded: ComponentType<P> | undefined;
  return function LazyScreen(props: P) {
    const [Screen, setScreen] = useState<ComponentType<P> | undefined>(() => loaded);
    const [failed, setFailed] = useState('');
    useEffect(() => {
      if (Screen) return;
      load().then((component) => { loaded = component; setScreen(() => component); }, (error: Error) => setFailed(error.message));
    }, []);
    if (failed) return <p role="alert" class="error">This screen could not be loaded: {failed}</p>;
    return Screen ? <Screen {...props} /> : <p role="status">Loading…</p>;
  };
}
