import { render } from 'preact';
import { App } from './app';
import { onLinkClick } from './router';

document.addEventListener('click', onLinkClick);
render(<App />, document.getElementById('app')!);
