"""The XML results reader: in bulk when plain (``_fast``, ``_slice``), else lxml's pull parser.

``_reader`` holds the entry point (:func:`~surveykit.results.xml._reader.iter_xml`), ``_names``
the ``_xHHHH_`` escapes of column names as element names (read and written).
"""
