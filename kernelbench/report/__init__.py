"""The sections of REPRODUCTION.md, one module per paper experiment (see ``command``)."""
