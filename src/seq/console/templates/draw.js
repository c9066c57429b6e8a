// Draw each plot's Vega-Lite spec (the page's <script class="vega-spec">) as SVG, in place.
for (const figure of document.querySelectorAll("figure.chart")) {
  const spec = figure.querySelector("script.vega-spec");
  if (spec) {
    vegaEmbed(figure.querySelector("div.vega"), JSON.parse(spec.textContent), {renderer: "svg", actions: false})
      .catch((error) => console.error("plot " + figure.innerText + ": " + error));
  }
}
