import { render } from 'preact';
import { App } from './app/app';
import { onLinkClick } from './app/router';

document.addEventListener('click', onLinkClick);
render(<App />, document.getElementById('app')!);
