"""Dataset card templates (Jinja), rendered through `huggingface_hub.DatasetCard`."""
