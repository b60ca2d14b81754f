"""What the Gradio Space and the main job share: constraint extraction, the live checklist, and
streaming greedy replies in the served configuration."""
