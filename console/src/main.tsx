import { render } from 'preact';
import { loadCredential } from './api/credentials';
import { prefetch } from './api/prefetch';
import { App, ME } from './app';
import { parseRoute } from './router';
import { FIRST_TASK_PAGE } from './screens/task-list';
import './styles.css';

// Asked before the first render, side by side: the sign-in check and, on the task list, its first page (one
// round trip less on a cold load, and no wait for an effect after the first paint).
// Without a credential the list would only be refused, and refusals count against the address's allowance.
prefetch(ME);
if (loadCredential() && parseRoute(location.pathname).screen === 'tasks') prefetch(FIRST_TASK_PAGE);
render(<App />, document.getElementById('app')!);
