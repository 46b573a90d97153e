"""The ``workbench`` command line: one small module per verb (or group of verbs), the parser in :mod:`.main`.

Each verb module has ``add(subparsers)`` (its options) and ``run(args)``: check the arguments, call one library
function, render its report. Computation a notebook may want lives in the library, never here.

| module | verbs |
| --- | --- |
| :mod:`.logs` | ``validate``, ``import``, ``export``, ``entries`` |
| :mod:`.judge` | ``judge`` (:func:`workbench.judges.judge_directory`) |
| :mod:`.simulate` | ``simulate`` |
| :mod:`.labeling` | ``sample``, ``label``, ``agree``, ``adjudicate`` |
| :mod:`.labelstudio` | ``labelstudio export``, ``labelstudio import`` |
| :mod:`.explore` | ``explore`` (:func:`workbench.explore.build_site`) |
| :mod:`.figures` | ``figures`` |

The console script is :func:`workbench.cli.main.main`.
"""
