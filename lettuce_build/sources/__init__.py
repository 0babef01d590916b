"""One builder per upstream source, and the registry that names them."""
