/**
 * The Account page on a phone (#42): each section folds under its heading, so the page is a short
 * list of headings and the one opened. Each `section > h2` of `root` gets a disclosure button
 * (aria-expanded) holding the heading's words, so the section's name stays the heading's; wide
 * screens start with every section open, phones with every section folded. Sections that appear
 * later (loaded after the page) get theirs as they come.
 *
 * Done on the rendered DOM rather than in each section's component: the sections are many, and
 * each keeps rendering its own content; Preact leaves the button and the attribute alone (it only
 * touches the nodes and props it rendered).
 */
export function foldSections(root: HTMLElement, folded: boolean): () => void {
  const enhance = () => {
    for (const heading of root.querySelectorAll<HTMLHeadingElement>(':scope > section > h2')) {
      if (heading.querySelector(':scope > button.fold') !== null) continue;
      const section = heading.parentElement!;
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'fold';
      button.append(...heading.childNodes);
      const set = (open: boolean) => {
        button.setAttribute('aria-expanded', String(open));
        section.toggleAttribute('data-folded', !open);
      };
      set(!folded);
      button.addEventListener('click', () => set(button.getAttribute('aria-expanded') !== 'true'));
      heading.append(button);
    }
  };
  enhance();
  const observer = new MutationObserver(enhance);
  observer.observe(root, { childList: true });
  return () => observer.disconnect();
}
