"""The bot's settings: the YAML file (``file``, read by ``yaml_file``, checked by
``parser``) and the environment (``environment``), each error naming the key (``errors``).

The three names every part reads them by are this package's own: :class:`Settings`,
:class:`Environment` and :class:`ConfigError`, with :class:`KickoffSettings` inside the
settings.
"""

from looproom.settings.environment import Environment
from looproom.settings.errors import ConfigError
from looproom.settings.file import Settings
from looproom.settings.parser import KickoffSettings

__all__ = ["ConfigError", "Environment", "KickoffSettings", "Settings"]
