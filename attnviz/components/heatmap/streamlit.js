// The Streamlit host: components v2 takes an ES module whose default export it calls with
// {data, parentElement, setStateValue, key}, which is what mountHeatmaps takes.
import { mountHeatmaps } from "./mount.js";

export default mountHeatmaps;
