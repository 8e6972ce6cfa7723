"""One resource class per endpoint group of the v3.2 reference."""

from surveykit.client.resources.data import Data
from surveykit.client.resources.keywords import Keywords
from surveykit.client.resources.messages import Messages
from surveykit.client.resources.surveys import Surveys
from surveykit.client.resources.tinyurl import TinyUrl
from surveykit.client.resources.webhooks import Webhooks

__all__ = ["Data", "Keywords", "Messages", "Surveys", "TinyUrl", "Webhooks"]
