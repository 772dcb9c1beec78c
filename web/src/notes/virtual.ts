import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
  type VirtualizerOptions,
} from '@tanstack/virtual-core';
import { useLayoutEffect, useReducer, useState } from 'preact/hooks';

type Options = Omit<
  VirtualizerOptions<HTMLElement, HTMLElement>,
  'observeElementRect' | 'observeElementOffset' | 'scrollToFn'
>;

/**
 * TanStack Virtual's virtualizer for a scrolling element, for Preact (its adapters are for React and
 * others): the component renders again whenever the visible range or the measured sizes change.
 */
export function useVirtualizer(options: Options): Virtualizer<HTMLElement, HTMLElement> {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const resolved: VirtualizerOptions<HTMLElement, HTMLElement> = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...options,
    onChange: (instance, sync) => {
      rerender(0);
      options.onChange?.(instance, sync);
    },
  };
  const [instance] = useState(() => new Virtualizer(resolved));
  instance.setOptions(resolved);
  useLayoutEffect(() => instance._didMount(), []);
  useLayoutEffect(() => instance._willUpdate());
  return instance;
}
