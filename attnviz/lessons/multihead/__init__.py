"""Multi-head anatomy: the head split and merge (heads), Concat·W_O as a sum over heads (projection),
MHA vs MQA vs GQA with KV-cache sizes and K/V heads averaged into groups (grouping), LaTeX (latex),
charts (figures)."""
