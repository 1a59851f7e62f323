// Entry point: mounts the dashboard into #app.
import { render } from 'preact';
import { z } from 'zod';
import { App } from './app.tsx';
import './styles.css';

// The dashboard's CSP forbids eval; without this, zod probes `new Function` and the browser reports a violation.
z.config({ jitless: true });

const root = document.getElementById('app');
if (root) render(<App />, root);
