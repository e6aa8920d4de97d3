"""The page's Panel views, each a :class:`~panel.viewable.Viewer` that owns its widgets and
is built on the session's model.

* :mod:`~ermviz.app.views.page` - :class:`~ermviz.app.views.page.Dashboard`: the toolbar,
  the tabs and the template, composed of the views below;
* :mod:`~ermviz.app.views.controls` - the sidebar;
* :mod:`~ermviz.app.views.race_view`, :mod:`~ermviz.app.views.teaching_view`,
  :mod:`~ermviz.app.views.export_view` - the Race, Teaching view and Export tabs;
* :mod:`~ermviz.app.views.race_status` - the race's status in words, for the toolbar;
* :mod:`~ermviz.app.views.widgets` - callback guard and widgets built from settings;
* :mod:`~ermviz.app.views.upload` - the chunked file drop zone;
* :mod:`~ermviz.app.views.background` - work off the page's event loop.
"""
