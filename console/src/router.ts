import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export type Route =
  | { screen: 'tasks' }
  | { screen: 'task'; taskId: string }
  | { screen: 'approvals' }
  | { screen: 'sessions' }
  | { screen: 'session'; sessionId: string }
  | { screen: 'schedules' }
  | { screen: 'tools' }
  | { screen: 'keys' }
  | { screen: 'missing' };

export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'tasks')) return { screen: 'tasks' };
  if (parts.length === 2 && parts[0] === 'tasks') return { screen: 'task', taskId: parts[1] };
  if (parts.length === 1 && parts[0] === 'approvals') return { screen: 'approvals' };
  if (parts.length === 1 && parts[0] === 'sessions') return { screen: 'sessions' };
  if (parts.length === 2 && parts[0] === 'sessions') return { screen: 'session', sessionId: parts[1] };
  if (parts.length === 1 && (parts[0] === 'schedules' || parts[0] === 'tools' || parts[0] === 'keys')) return { screen: parts[0] };
  return { screen: 'missing' };
}

export function navigate(path: string): void {
  history.pushState(null, '', `${BASE}${path}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}

/** An in-app link: a real href (open in a new tab works) that navigates without a reload. */
export function onLinkClick(event: MouseEvent, path: string): void {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(path);
}
