// DOM building without HTML strings: every text goes through text nodes, so run names, metric keys and
// server messages (hostile input) can never become markup. Attributes are set by name; event handlers
// are attached with addEventListener only, never as "on*" attributes.

export type Child = Node | string | number | null | undefined | false;

export interface Attrs {
  class?: string;
  testid?: string;
  title?: string;
  [name: string]: string | number | boolean | undefined;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === false) continue;
      if (/^on/i.test(name) || name === 'style') throw new Error(`refusing attribute ${name}`);
      const attr = name === 'testid' ? 'data-testid' : name;
      el.setAttribute(attr, value === true ? '' : String(value));
    }
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function replaceChildren(el: Node, ...children: Child[]): void {
  clear(el);
  append(el, ...children);
}

// A button whose click runs `fn`.
export function button(label: Child, attrs: Attrs, fn: (ev: MouseEvent) => void): HTMLButtonElement {
  const b = h('button', { type: 'button', ...attrs }, label);
  b.addEventListener('click', fn);
  return b;
}
