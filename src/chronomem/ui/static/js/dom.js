// Small DOM helpers. Every text from the memory goes in as a text node, never as HTML.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function show(container, ...children) {
  container.replaceChildren(...children.flat().filter(Boolean));
}

// A moment as people read it: the day when it is midnight UTC, else to the second.
export function moment(iso) {
  if (!iso) return "";
  const text = new Date(iso).toISOString();
  return text.endsWith("T00:00:00.000Z") ? text.slice(0, 10) : `${text.slice(0, 19).replace("T", " ")}Z`;
}

// valid_at – invalid_at on the world's timeline; an open end is "…".
export function span(fact) {
  return `${fact.valid_at ? moment(fact.valid_at) : "…"} – ${fact.invalid_at ? moment(fact.invalid_at) : "…"}`;
}

export const plural = (count, one, many = `${one}s`) => `${count.toLocaleString("en")} ${count === 1 ? one : many}`;
