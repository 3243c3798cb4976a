// The entity graph, drawn with Cytoscape.js (vendored) and laid out with its fCoSE extension.
// Communities are colours, a node's size grows with the episodes that mention it, edges carry their
// relation type, and a hyperedge (a fact with more than two participants) is a small hub node that
// holds the label, with a spoke to each participant.

/* global cytoscape, cytoscapeFcose */

const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
  "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"];
const NO_COMMUNITY = "#9aa3ad";
const LARGE = 800; // above this many nodes: the quick layout, and no edge labels while panning

let registered = false;

function colourOf(communityIds, id) {
  if (!id) return NO_COMMUNITY;
  if (!communityIds.has(id)) communityIds.set(id, PALETTE[communityIds.size % PALETTE.length]);
  return communityIds.get(id);
}

// Grows with the log of the mentions, so a few much-cited entities do not cover the rest.
const nodeSize = (mentions) => Math.min(80, 16 + 8 * Math.log2(1 + mentions));

const STYLE = [
  { selector: "node.entity", style: {
    "background-color": "data(colour)", width: "data(size)", height: "data(size)", label: "data(name)",
    "font-size": 10, "text-valign": "bottom", "text-margin-y": 3, color: "#1f2933", "min-zoomed-font-size": 6,
    "text-background-color": "#ffffff", "text-background-opacity": 0.7, "text-background-padding": 1 } },
  { selector: "node.hub", style: {
    shape: "diamond", width: 12, height: 12, "background-color": "#52606d", label: "data(label)", "font-size": 8,
    color: "#52606d", "text-valign": "top", "min-zoomed-font-size": 7 } },
  { selector: "edge", style: {
    width: 1.5, "line-color": "#9aa5b1", "target-arrow-color": "#9aa5b1", "target-arrow-shape": "triangle",
    "curve-style": "bezier", "arrow-scale": 0.8 } },
  { selector: "edge.fact", style: {
    label: "data(label)", "font-size": 7, "text-rotation": "autorotate", color: "#52606d",
    "min-zoomed-font-size": 7, "text-background-color": "#ffffff", "text-background-opacity": 0.8 } },
  { selector: "edge.spoke", style: { "target-arrow-shape": "none", "line-style": "dotted" } },
  { selector: ".out-of-view", style: { "line-style": "dashed", opacity: 0.45 } },
  { selector: ":selected", style: { "border-width": 3, "border-color": "#102a43", "line-color": "#102a43" } },
];

export class GraphView {
  constructor(container, { onEntity, onFact }) {
    if (!registered) {
      cytoscape.use(cytoscapeFcose);
      registered = true;
    }
    this.communities = new Map();
    this.cy = cytoscape({
      container, style: STYLE, minZoom: 0.05, maxZoom: 4,
      textureOnViewport: true, hideEdgesOnViewport: false, pixelRatio: 1,
    });
    this.cy.on("tap", "node.entity", (event) => onEntity(event.target.id()));
    this.cy.on("tap", "edge.fact, node.hub", (event) => onFact(event.target.data("factId")));
  }

  clear() {
    this.cy.elements().remove();
    this.communities.clear();
  }

  // Add a page of entities, and its facts, to what is drawn; lays the graph out again.
  async addPage(page) {
    const fresh = page.nodes.filter((node) => this.cy.getElementById(node.id).empty());
    this.cy.batch(() => {
      this.cy.add(fresh.map((node) => this.#entityElement(node)));
      this.#addFacts(page.edges);
    });
    this.#placeNear(fresh);
    await this.layout({ randomize: this.cy.nodes().length === fresh.length });
  }

  // Show another selection of the same pages (the sliders moved): entities that stay keep their
  // place, entities not yet known at t′ leave, facts are drawn anew.
  replace(pages) {
    const nodes = pages.flatMap((page) => page.nodes);
    const keep = new Set(nodes.map((node) => node.id));
    const fresh = nodes.filter((node) => this.cy.getElementById(node.id).empty());
    this.cy.batch(() => {
      this.cy.edges().remove();
      this.cy.nodes(".hub").remove();
      this.cy.nodes(".entity").filter((node) => !keep.has(node.id())).remove();
      this.cy.add(fresh.map((node) => this.#entityElement(node)));
      this.#addFacts(pages.flatMap((page) => page.edges));
    });
    this.#placeNear(fresh);
  }

  entityIds() {
    return new Set(this.cy.nodes(".entity").map((node) => node.id()));
  }

  select(id) {
    this.cy.elements(":selected").unselect();
    this.cy.getElementById(id).select();
  }

  layout({ randomize }) {
    const large = this.cy.nodes().length > LARGE;
    this.cy.style().selector("edge.fact").style("min-zoomed-font-size", large ? 12 : 7).update();
    const layout = this.cy.layout({
      name: "fcose", quality: large ? "draft" : "default", randomize, animate: false, fit: true, padding: 24,
      nodeRepulsion: 6000, idealEdgeLength: 70, numIter: large ? 600 : 2500, packComponents: true,
    });
    const done = new Promise((resolve) => layout.one("layoutstop", resolve));
    layout.run();
    return done;
  }

  fit() {
    this.cy.fit(undefined, 24);
  }

  #entityElement(node) {
    return {
      group: "nodes", classes: "entity",
      data: { id: node.id, name: node.name, size: nodeSize(node.mentions), colour: colourOf(this.communities, node.community) },
    };
  }

  // Edges only join drawn entities; a hyperedge becomes a hub with spokes.
  #addFacts(edges) {
    const elements = [];
    for (const edge of edges) {
      const classes = edge.in_view ? "" : "out-of-view";
      const ends = [edge.source, edge.target, ...edge.others].filter((id) => !this.cy.getElementById(id).empty());
      if (edge.others.length === 0) {
        elements.push({ group: "edges", classes: `fact ${classes}`,
          data: { id: edge.id, factId: edge.id, source: edge.source, target: edge.target, label: edge.relation_type } });
        continue;
      }
      const hub = `hub:${edge.id}`;
      elements.push({ group: "nodes", classes: `hub ${classes}`, data: { id: hub, factId: edge.id, label: edge.relation_type } });
      ends.forEach((end, index) => elements.push({ group: "edges", classes: `spoke ${classes}`,
        data: { id: `${hub}:${index}`, factId: edge.id, source: hub, target: end } }));
    }
    this.cy.add(elements);
  }

  // New entities start beside a drawn neighbour, so the next layout moves little.
  #placeNear(nodes) {
    for (const node of nodes) {
      const element = this.cy.getElementById(node.id);
      const placed = element.neighborhood("node").filter((other) => !nodes.some((n) => n.id === other.id()));
      if (placed.nonempty()) {
        const { x, y } = placed[0].position();
        element.position({ x: x + (Math.random() - 0.5) * 60, y: y + (Math.random() - 0.5) * 60 });
      }
    }
  }
}
