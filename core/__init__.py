"""The kernel: what every layer shares and that imports nothing else of the project.

Errors (:mod:`.errors`), the deadline a call carries (:mod:`.deadline`), the records memory is
made of (:mod:`.records`, :mod:`.media`), the request and answer types of the query side
(:mod:`.query`, :mod:`.article`), the Protocols every model and store implements
(:mod:`.interfaces`, :mod:`.llm`) and the one validator of incoming requests
(:mod:`.validation`). Nothing here has an import-time side effect.
"""
