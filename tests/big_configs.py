"""config.json contents of real models, for the size checks (no weights: only their shapes matter)."""

LLAMA_7B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000, "hidden_act": "silu",
            "tie_word_embeddings": False, "max_position_embeddings": 4096}
GPT2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257,
        "activation_function": "gelu_new"}
