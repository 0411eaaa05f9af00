import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, whenSignedOut, type Me } from './api/client';
import { loadCredential, saveCredential } from './api/credentials';
import { onLinkClick, useRoute, BASE, type Route } from './router';
import { SignIn } from './screens/sign-in';
import { TaskListScreen } from './screens/task-list';
import { ApprovalsScreen } from './screens/approvals';
import { SessionsScreen } from './screens/sessions';
import { getOnce } from './api/prefetch';
import { lazyScreen } from './lazy-screen';
import { canManageKeys } from './screens/keys-access';

// Screens other than the task list are loaded on first use, keeping the first screen's script small: the task
// page carries the Markdown renderer, the sanitiser and the stream parser, most of the bundle.
const TaskPage = lazyScreen(() => import('./screens/task-page').then((module) => module.TaskPage));
const SessionPage = lazyScreen(() => import('./screens/session-page').then((module) => module.SessionPage));
const SchedulesScreen = lazyScreen(() => import('./screens/schedules').then((module) => module.SchedulesScreen));
const ToolsScreen = lazyScreen(() => import('./screens/tools').then((module) => module.ToolsScreen));
const KeysScreen = lazyScreen(() => import('./screens/keys').then((module) => module.KeysScreen));

export const ME = '/api/v1/auth/me';

type Who = { state: 'checking' } | { state: 'signed out' } | { state: 'signed in'; me: Me } | { state: 'error'; message: string };

export function App() {
  const route = useRoute();
  const [who, setWho] = useState<Who>({ state: 'checking' });

  const check = (first = false) => {
    // With GATEWAY_SKIP_AUTH the gateway answers /auth/me as the development user: no sign-in needed.
    // The first check takes the answer main.tsx asked for before the first render.
    (first ? getOnce<Me>(ME) : api<Me>('GET', ME))
      .then((me) => setWho({ state: 'signed in', me }))
      // A 429 without a credential is the address's allowance for refused requests: the form still shows.
      .catch((error) => setWho(error instanceof ApiError && (error.status === 401 || error.status === 403 || (error.status === 429 && !loadCredential()))
        ? { state: 'signed out' }
        : { state: 'error', message: String(error.message ?? error) }));
  };
  useEffect(() => {
    whenSignedOut(() => setWho({ state: 'signed out' }));
    check(true);
  }, []);

  useEffect(() => {
    document.title = `${routeTitle(route)} · agentgate console`;
  }, [route]);

  if (who.state === 'checking') return <main id="main" class="page"><p role="status">Loading…</p></main>;
  if (who.state === 'error') return <main id="main" class="page"><p role="alert">The gateway could not be reached: {who.message}</p></main>;
  if (who.state === 'signed out') return <SignIn onSignedIn={check} />;

  const signOut = () => {
    saveCredential(null);
    setWho({ state: 'signed out' });
  };
  return (
    <>
      <header class="topbar">
        <a class="brand" href={`${BASE}/`} onClick={(e) => onLinkClick(e, '/')}>agentgate</a>
        <nav aria-label="Main">
          <NavLink path="/" label="Tasks" current={route.screen === 'tasks' || route.screen === 'task'} />
          <NavLink path="/approvals" label="Approvals" current={route.screen === 'approvals'} />
          <NavLink path="/sessions" label="Sessions" current={route.screen === 'sessions' || route.screen === 'session'} />
          <NavLink path="/schedules" label="Schedules" current={route.screen === 'schedules'} />
          <NavLink path="/tools" label="Tools" current={route.screen === 'tools'} />
          {canManageKeys(who.me) && <NavLink path="/keys" label="Keys" current={route.screen === 'keys'} />}
        </nav>
        <div class="who">
          <span>{who.me.email}</span>
          {who.me.auth_method !== 'development' && <button type="button" class="link" onClick={signOut}>Sign out</button>}
        </div>
      </header>
      <main id="main" class="page">
        <Screen route={route} me={who.me} />
      </main>
    </>
  );
}

function Screen({ route, me }: { route: Route; me: Me }) {
  switch (route.screen) {
    case 'tasks': return <TaskListScreen />;
    case 'task': return <TaskPage key={route.taskId} taskId={route.taskId} />;
    case 'approvals': return <ApprovalsScreen />;
    case 'sessions': return <SessionsScreen />;
    case 'session': return <SessionPage key={route.sessionId} sessionId={route.sessionId} />;
    case 'schedules': return <SchedulesScreen />;
    case 'tools': return <ToolsScreen />;
    case 'keys': return <KeysScreen me={me} />;
    default: return <><h1>Not found</h1><p>There is no such page in the console.</p></>;
  }
}

function NavLink({ path, label, current }: { path: string; label: string; current: boolean }) {
  return <a href={`${BASE}${path}`} aria-current={current ? 'page' : undefined} onClick={(e) => onLinkClick(e, path)}>{label}</a>;
}

function routeTitle(route: Route): string {
  switch (route.screen) {
    case 'tasks': return 'Tasks';
    case 'task': return 'Task';
    case 'approvals': return 'Approvals';
    case 'sessions': return 'Sessions';
    case 'session': return 'Session';
    case 'schedules': return 'Schedules';
    case 'tools': return 'Tools';
    case 'keys': return 'API keys';
    default: return 'Not found';
  }
}
