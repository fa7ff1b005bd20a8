"""Run by tests/packaging/test_wheel_install.py with the fresh environment's python, from a temporary folder, with no
PYTHONPATH and HF_HUB_OFFLINE=1: what a user gets from `pip install attnviz-*.whl`. Prints one JSON line of findings;
the test asserts on them. It imports nothing from the checkout: it is copied next to the run and run from there.

argv: the example notebook's path, and the folder to work in.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import nbformat
import torch
import transformers
from nbclient import NotebookClient

import attnviz
from attnviz.draw.payload_frames import unwrap
from attnviz.engine.gru_seq2seq import GRUSeq2Seq
from attnviz.engine.models.loading import offline_names

notebook_path, work = Path(sys.argv[1]), Path(sys.argv[2])
WIDGET = "application/vnd.jupyter.widget-view+json"


def parts_of(head: dict) -> int:
    return head["parts"]


found: dict = {"version": attnviz.__version__, "attnviz_file": attnviz.__file__, "python": sys.executable}

# every model attnviz ships, by the name the app's pickers show, offline, and run
ran = {}
for name in offline_names():
    model = attnviz.load_model(name)
    if isinstance(model, GRUSeq2Seq):
        ran[name] = model.translate("forty two").output_text
    else:
        res = model.run("one two three four") if name != "tiny-bart" else model.run("forty two", target="4 2")
        ran[name] = [list(res.attentions.shape), float(res.attentions.sum(-1).mean())]
found["models"] = ran

# a transformers output_attentions tuple from an eager model: a tiny random BERT saved with save_pretrained
torch.manual_seed(0)
bert_config = transformers.BertConfig(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=64, max_position_embeddings=32)
transformers.BertModel(bert_config).save_pretrained(work / "tiny-bert")
bert = transformers.AutoModel.from_pretrained(work / "tiny-bert", attn_implementation="eager").eval()
with torch.no_grad():
    out = bert(torch.tensor([[2, 11, 12, 13, 3]]), output_attentions=True)
tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
with warnings.catch_warnings():
    warnings.simplefilter("error")  # a true softmax draws without a warning
    found["bert_tuple"] = len(attnviz.show(out.attentions, tokens=tokens).document)
    found["bert_output"] = len(attnviz.show(out, tokens=tokens).document)
    found["bert_html"] = attnviz.save_html(out, work / "bert.html", tokens=tokens).stat().st_size

# an encoder–decoder's three attentions: a tiny random BART, in one call, by bertviz's names and as it comes
bart_config = transformers.BartConfig(vocab_size=40, d_model=32, encoder_layers=2, decoder_layers=2,
                                      encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                      decoder_ffn_dim=64, max_position_embeddings=32)
bart = transformers.BartForConditionalGeneration._from_config(bart_config, attn_implementation="eager").eval()
with torch.no_grad():
    pair = bart(input_ids=torch.tensor([[0, 5, 6, 7, 2]]), decoder_input_ids=torch.tensor([[2, 0, 8]]),
                output_attentions=True)
source, target = ["<s>", "x", "y", "z", "</s>"], ["</s>", "<s>", "w"]
with warnings.catch_warnings():
    warnings.simplefilter("error")
    three = attnviz.show(encoder_attention=pair.encoder_attentions, decoder_attention=pair.decoder_attentions,
                         cross_attention=pair.cross_attentions, encoder_tokens=source, decoder_tokens=target)
    as_it_comes = attnviz.show(pair, encoder_tokens=source, decoder_tokens=target)
found["seq2seq_sets"] = [s["name"] for s in unwrap(three.document, parts_of)[0]["sets"]]
found["seq2seq_same"] = unwrap(three.document, parts_of)[1] == unwrap(as_it_comes.document, parts_of)[1]  # same cells

# the example notebook in a real kernel: the kernelspec installed into this environment, whose python is this one;
# a first cell added here reports the kernel's python and where its attnviz came from
nb = nbformat.read(notebook_path, as_version=4)
nb.cells.insert(0, nbformat.v4.new_code_cell("import sys, attnviz\nprint(sys.executable)\nprint(attnviz.__file__)"))
NotebookClient(nb, kernel_name=sys.argv[3], timeout=300, resources={"metadata": {"path": str(work)}}).execute()
errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
found["notebook_errors"] = [f"{e['ename']}: {e['evalue']}" for e in errors]
found["kernel_says"] = "".join(o.get("text", "") for o in nb.cells[0].outputs).split()
found["notebook_widgets"] = sum(o.get("output_type") == "execute_result" and WIDGET in o.get("data", {})
                                for c in nb.cells if c.cell_type == "code" for o in c.outputs)  # each show()'s
found["notebook_html"] = (work / "attention.html").exists()
print(json.dumps(found))
