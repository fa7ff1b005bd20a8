"""The Cross-attention page: a target's queries reading a source's keys and values, in an encoder–decoder.

views.py: what the page draws for an encoder–decoder (its cross-attention, and its decoder's self-attention);
number_task.py: attnviz-tiny-bart, the page's default (what it reads, its own answer, the rows' names, and the
figures behind what the page says of its alignment); latex.py: the equation with the real shapes.
"""
