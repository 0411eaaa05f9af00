import { render } from 'preact';
import { prefetch } from './api/prefetch';
import { App, ME } from './app';
import { parseRoute } from './router';
import { FIRST_TASK_PAGE } from './screens/task-list';
import './styles.css';

// Asked before the first render, side by side: the sign-in check and, on the task list, its first page (one
// round trip less on a cold load, and no wait for an effect after the first paint).
prefetch(ME);
if (parseRoute(location.pathname).screen === 'tasks') prefetch(FIRST_TASK_PAGE);
render(<App />, document.getElementById('app')!);
