"""The datasets a model says it was trained on, as lineage.

DataHub's ``mlModelTrainingData`` aspect of an ``mlModel`` (``trainingData[].dataset``) names the model's training
datasets but carries no ``Relationship`` annotation, so the annotation-derived edges
(:mod:`libs.datahub.relationships`) never see it. For ModelGuard a model's declared training dataset is the
first place a data cause comes from, so each one becomes an upstream lineage edge ``TrainedOn`` of the model.
``mlModelEvaluationData`` is not lineage: the model does not learn from it.
"""

from __future__ import annotations

from datahub.metadata.schema_classes import TrainingDataClass, _Aspect

from libs.datahub.relationships import Edge

TRAINED_ON = "TrainedOn"
ASPECT_NAME = TrainingDataClass.ASPECT_NAME


def training_data_edges(urn: str, aspect_name: str, aspect: _Aspect) -> list[Edge]:
    if aspect_name != ASPECT_NAME or not isinstance(aspect, TrainingDataClass):
        return []
    datasets = dict.fromkeys(item.dataset for item in aspect.trainingData if item.dataset)
    return [
        Edge(
            source=urn,
            destination=dataset,
            relationship=TRAINED_ON,
            is_lineage=True,
            destination_is_upstream=True,
            aspect_name=ASPECT_NAME,
            field_path="trainingData/*/dataset",
        )
        for dataset in datasets
    ]
