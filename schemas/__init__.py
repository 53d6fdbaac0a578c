"""marshmallow schemas: the shape and validation of every body and argument."""
